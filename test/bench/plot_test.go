package main

import (
	"encoding/xml"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestTick(t *testing.T) {
	for _, tc := range []struct{ max, want float64 }{
		{0, 1}, {1, 0.1}, {7, 1}, {10, 1}, {12, 2}, {53, 10}, {95, 10}, {1000, 100}, {1500, 200}, {4100, 500},
	} {
		require.Equal(t, tc.want, tick(tc.max), "max %v", tc.max)
	}
}

func TestTheConvergeChartDrawsBothCurvesToScale(t *testing.T) {
	r := Result{Apps: 1000, comparison: comparison{Ratio: 1.25,
		BaselineCurve: []Point{{0, 0}, {20, 500}, {40, 1000}},
		ConvergeCurve: []Point{{0, 0}, {25, 500}, {50, 1000}},
	}}
	svg := convergeChart(r).svg()
	var doc struct {
		Polylines []struct {
			Points string `xml:"points,attr"`
		} `xml:"polyline"`
		Texts []string `xml:"text"`
	}
	require.NoError(t, xml.Unmarshal(svg, &doc), "well-formed SVG")
	require.Len(t, doc.Polylines, 2)
	// The axes run 0..50 s and 0..1000 Apps over a plot 560 by 240 pixels from (64, 72).
	require.Equal(t, "64.0,312.0 288.0,192.0 512.0,72.0", doc.Polylines[0].Points, "the baseline")
	require.Equal(t, "64.0,312.0 344.0,192.0 624.0,72.0", doc.Polylines[1].Points, "the operator")
	require.Contains(t, doc.Texts, "Converging 1000 Apps: App Operator against its baseline (ratio 1.25)")
	require.Contains(t, doc.Texts, "App Operator: Apps")
}

func TestTheHeapChartSortsRunsByTheirNumberOfApps(t *testing.T) {
	c := heapChart([]Result{
		{Apps: 5000, HeapKiBPerApp: 22, HeapKiBPerAppRestarted: 13, HeapLiveBytes: 5000 * 10 * 1024, HeapLiveRestartedBytes: 5000 * 8 * 1024},
		{Apps: 1000, HeapKiBPerApp: 31, HeapLiveBytes: 1000 * 15 * 1024},
	})
	require.Equal(t, [][2]float64{{1000, 31}, {5000, 22}}, c.series[0].points)
	require.Equal(t, [][2]float64{{5000, 13}}, c.series[1].points, "a run without a restart has no second figure")
	require.Equal(t, [][2]float64{{1000, 15}, {5000, 10}}, c.series[2].points, "live objects per App")
	require.Equal(t, [][2]float64{{5000, 8}}, c.series[3].points)
}
