package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestMedianRound(t *testing.T) {
	rounds := func(ratios ...float64) []Round {
		var rs []Round
		for _, r := range ratios {
			rs = append(rs, Round{comparison: comparison{Ratio: r, ConvergeSeconds: 10 * r, BaselineSeconds: 10}})
		}
		return rs
	}
	for _, tc := range []struct {
		name   string
		ratios []float64
		want   float64
	}{
		{"one round", []float64{1.4}, 1.4},
		{"odd count: the middle one", []float64{1.9, 1.1, 1.4}, 1.4},
		{"even count: the lower middle one", []float64{1.6, 1.2, 1.9, 1.3}, 1.3},
		{"ties", []float64{1.5, 1.5, 1.2}, 1.5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := rounds(tc.ratios...)
			got := median(in)
			assert.Equal(t, tc.want, got.Ratio)
			assert.Equal(t, 10*tc.want, got.ConvergeSeconds, "the whole round is reported, not the ratio alone")
			assert.Equal(t, tc.ratios, func() []float64 {
				var rs []float64
				for _, r := range in {
					rs = append(rs, r.Ratio)
				}
				return rs
			}(), "the rounds are left in their order")
		})
	}
}
