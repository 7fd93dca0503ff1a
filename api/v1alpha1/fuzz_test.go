package v1alpha1_test

import (
	"encoding/json"
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/diff"

	v1 "github.com/mycompany/app-operator/api/v1"
	"github.com/mycompany/app-operator/api/v1alpha1"
)

// FuzzConversion checks, on arbitrary v1 Apps given as JSON, that v1 -> v1alpha1 -> v1 loses
// nothing and never fails.
func FuzzConversion(f *testing.F) {
	f.Add([]byte(`{"metadata":{"name":"web","annotations":{"a":"b"}},"spec":{"image":"nginx","replicas":2}}`))
	f.Add([]byte(`{"metadata":{"name":"web"},"spec":{"image":"nginx","args":["-v"],"autoscaling":{"maxReplicas":3},"env":[{"name":"A","valueFrom":{"fieldRef":{"fieldPath":"metadata.name"}}}]},"status":{"availableReplicas":1,"conditions":[{"type":"Available","status":"True","reason":"R","message":"","lastTransitionTime":"2026-01-01T00:00:00Z"}]}}`))
	f.Add([]byte(`{"metadata":{"name":"web","annotations":{"mycompany.com/v1-conversion-data":"{}"}},"spec":{"image":"x","resources":{"limits":{"memory":"1Gi"}}}}`))
	f.Add([]byte(`{"metadata":{"name":"web"},"spec":{"image":"web:2","rollout":{"autoRollback":false,"progressDeadlineSeconds":60}},"status":{"desiredReplicas":3,"healed":{"count":2,"last":"recreated Service web, which was missing","time":"2026-01-01T00:00:00Z"},"rollout":{"availableTemplate":"1x2y","rolledBack":{"template":"3z","image":"web:2","time":"2026-01-01T00:01:00Z"}}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		hub := &v1.App{}
		if json.Unmarshal(data, hub) != nil {
			t.Skip()
		}
		// The annotation belongs to conversion; a hub never carries it.
		delete(hub.Annotations, v1alpha1.ConversionDataAnnotation)
		// Normalize through JSON, as the API server would have stored it.
		raw, err := json.Marshal(hub)
		if err != nil {
			t.Skip()
		}
		hub = &v1.App{}
		if err := json.Unmarshal(raw, hub); err != nil {
			t.Skip()
		}

		spoke := &v1alpha1.App{}
		if err := spoke.ConvertFrom(hub.DeepCopy()); err != nil {
			t.Fatalf("v1 -> v1alpha1: %v", err)
		}
		back := &v1.App{}
		if err := spoke.ConvertTo(back); err != nil {
			t.Fatalf("v1alpha1 -> v1: %v", err)
		}
		if !equality.Semantic.DeepEqual(hub, back) {
			t.Fatalf("round trip lost data:\n%s", diff.Diff(hub, back))
		}
	})
}
