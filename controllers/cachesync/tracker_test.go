package cachesync

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

func at(rv string) client.Object {
	return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web", ResourceVersion: rv}}
}

var (
	web   = client.ObjectKey{Namespace: "shop", Name: "web"}
	api   = client.ObjectKey{Namespace: "shop", Name: "api"}
	webID = ID{Kind: "Service", Key: web}
)

func TestTheCacheIsBehindUntilItShowsTheWrittenVersion(t *testing.T) {
	for _, tc := range []struct {
		name   string
		cached client.Object
		behind bool
	}{
		{"missing from the cache", nil, true},
		{"an older version", at("41"), true},
		{"the written version", at("42"), false},
		{"a newer version", at("57"), false},
		{"a version that is not a number", at("x"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := &Tracker{}
			tr.Wrote(web, webID, at("42"))
			behind, wait := tr.Behind(webID, tc.cached)
			require.Equal(t, tc.behind, behind)
			if tc.behind {
				require.Positive(t, wait)
				require.LessOrEqual(t, wait, MaxWait)
			}
		})
	}
}

func TestAWriteTheCacheShowedIsForgotten(t *testing.T) {
	tr := &Tracker{}
	tr.Wrote(web, webID, at("42"))
	behind, _ := tr.Behind(webID, at("42"))
	require.False(t, behind)
	behind, _ = tr.Behind(webID, nil)
	require.False(t, behind, "missing after the cache showed it: deleted since, not lagging")
}

func TestNothingWrittenIsNeverBehind(t *testing.T) {
	tr := &Tracker{}
	behind, wait := tr.Behind(webID, nil)
	require.False(t, behind)
	require.Zero(t, wait)
	tr.Wrote(web, webID, at("")) // an API server without numeric versions
	behind, _ = tr.Behind(webID, nil)
	require.False(t, behind)
}

func TestAWriteIsAwaitedForMaxWaitAtMost(t *testing.T) {
	clock := clocktesting.NewFakePassiveClock(time.Now())
	tr := &Tracker{Clock: clock}
	tr.Wrote(web, webID, at("42"))
	clock.SetTime(clock.Now().Add(MaxWait - time.Second))
	behind, wait := tr.Behind(webID, nil)
	require.True(t, behind)
	require.Equal(t, time.Second, wait, "what is left of MaxWait")
	clock.SetTime(clock.Now().Add(time.Second))
	behind, _ = tr.Behind(webID, nil)
	require.False(t, behind)
}

func TestTheLastWriteCounts(t *testing.T) {
	tr := &Tracker{}
	tr.Wrote(web, webID, at("42"))
	tr.Wrote(web, webID, at("50"))
	behind, _ := tr.Behind(webID, at("42"))
	require.True(t, behind, "the cache shows the first write, not the second")
}

func TestForgetDropsTheWritesOfAnOwnerOnly(t *testing.T) {
	tr := &Tracker{}
	apiID := ID{Kind: "Service", Key: api}
	tr.Wrote(web, webID, at("42"))
	tr.Wrote(web, ID{Kind: "App", Key: web}, at("43"))
	tr.Wrote(api, apiID, at("44"))
	tr.Forget(web)
	for _, id := range []ID{webID, {Kind: "App", Key: web}} {
		behind, _ := tr.Behind(id, nil)
		require.False(t, behind, id.String())
	}
	behind, _ := tr.Behind(apiID, nil)
	require.True(t, behind, "another owner's writes are kept")
}
