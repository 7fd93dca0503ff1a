package apply

import (
	"encoding/json"
	"testing"
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
