package apply

import (
	"encoding/json"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// BenchmarkApplyConfiguration turns a desired Deployment into the fields to apply, with its
// hash; BenchmarkMarshal, the JSON encoding alone, is the baseline.
func BenchmarkApplyConfiguration(b *testing.B) {
	d := deployment("web:1")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := applyConfiguration(d); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkMarshal(b *testing.B) {
	d := deployment("web:1")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := json.Marshal(d); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkContains compares a cached child with its desired fields: the whole cost of a
// reconcile that finds nothing to write.
func BenchmarkContains(b *testing.B) {
	want, err := applyConfiguration(deployment("web:1"))
	if err != nil {
		b.Fatal(err)
	}
	have, err := toMap(deployment("web:1"))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		_ = contains(have, want)
	}
}

// BenchmarkOwnedHash hashes the fields the operator owns of a child, as the cache does for each
// watch event of a child; BenchmarkApplyConfiguration, the same hash of the desired fields, is
// the baseline.
func BenchmarkOwnedHash(b *testing.B) {
	d := deployment("web:1")
	want, err := applyConfiguration(d)
	if err != nil {
		b.Fatal(err)
	}
	fields, err := json.Marshal(fieldsOf(want))
	if err != nil {
		b.Fatal(err)
	}
	d.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: FieldOwner, Operation: metav1.ManagedFieldsOperationApply, FieldsV1: metav1.NewFieldsV1(string(fields))}}
	d.Annotations = map[string]string{HashAnnotation: hashOf(want)}
	if got := OwnedHash(d); got != hashOf(want) {
		b.Fatalf("owned hash %q, applied %q", got, hashOf(want))
	}
	b.ReportAllocs()
	for b.Loop() {
		_ = OwnedHash(d)
	}
}

// fieldsOf is the managed-fields set the API server records for a configuration applied as a
// whole: every field, and the items of lists of named items by name.
func fieldsOf(v any) map[string]any {
	set := map[string]any{}
	switch t := v.(type) {
	case map[string]any:
		for k, child := range t {
			set["f:"+k] = fieldsOf(child)
		}
	case []any:
		if !isNamed(t) {
			return set
		}
		for _, item := range t {
			sub := fieldsOf(item)
			sub["."] = map[string]any{}
			set[`k:{"name":"`+nameOf(item)+`"}`] = sub
		}
	}
	return set
}
