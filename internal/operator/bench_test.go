package operator_test

import (
	goruntime "runtime"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/runtime"

	appv1 "github.com/mycompany/app-operator/api/v1"
	"github.com/mycompany/app-operator/internal/operator"
)

// BenchmarkCachedApp decodes a converged App and trims it as the cache does, and keeps every
// one, reporting the bytes each keeps on the heap (retained-B/obj); BenchmarkDecodedApp, the
// decoded App kept whole, is the baseline.
func BenchmarkCachedApp(b *testing.B) {
	benchmarkCached(b, encoded(b, convergedApp(1)), &appv1.App{}, operator.TrimApp)
}

func BenchmarkDecodedApp(b *testing.B) {
	benchmarkCached(b, encoded(b, convergedApp(1)), &appv1.App{}, nil)
}

// BenchmarkCachedDeployment does the same for an App's Deployment, slimmed as the cache does;
// BenchmarkDecodedDeployment is the baseline.
func BenchmarkCachedDeployment(b *testing.B) {
	benchmarkCached(b, encoded(b, convergedDeployment(1)), &appsv1.Deployment{}, operator.SlimChild)
}

func BenchmarkDecodedDeployment(b *testing.B) {
	benchmarkCached(b, encoded(b, convergedDeployment(1)), &appsv1.Deployment{}, nil)
}

// benchmarkCached decodes raw into objects of into's kind, hands each to transform unless it
// is nil, and keeps them all, as an informer's store does.
func benchmarkCached[T runtime.Object](b *testing.B, raw []byte, into T, transform func(any) (any, error)) {
	var kept []any
	var before, after goruntime.MemStats
	goruntime.GC()
	goruntime.ReadMemStats(&before)
	b.ReportAllocs()
	for b.Loop() {
		var obj any = decoded(b, raw, into)
		if transform != nil {
			var err error
			if obj, err = transform(obj); err != nil {
				b.Fatal(err)
			}
		}
		kept = append(kept, obj)
	}
	goruntime.GC()
	goruntime.ReadMemStats(&after)
	// The slice that keeps them is the benchmark's, not the cache's.
	const slot = 16
	b.ReportMetric(float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)-int64(cap(kept)*slot))/float64(len(kept)), "retained-B/obj")
	goruntime.KeepAlive(kept)
}
