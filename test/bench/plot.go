package main

import (
	"bytes"
	"fmt"
	"html"
	"math"
	"slices"
)

// series is one line of a chart: its name and its points, in order of x.
type series struct {
	name   string
	color  string
	points [][2]float64
}

// chart is a line chart written as SVG directly, for the docs: axes from zero with round
// ticks, one polyline (and a dot on each point of a short series) per series, and a legend
// above the plot. Two series fit in each column of the legend, between the title and the plot.
type chart struct {
	title, xLabel, yLabel string
	series                []series
}

const (
	chartWidth, chartHeight         = 640, 360
	marginLeft, marginRight         = 64, 16
	marginTop, marginBottom         = 72, 48
	legendColumn                    = 280
	plotWidth, plotHeight   float64 = chartWidth - marginLeft - marginRight, chartHeight - marginTop - marginBottom
)

// svg draws the chart.
func (c chart) svg() []byte {
	xMax, yMax := 0.0, 0.0
	for _, s := range c.series {
		for _, p := range s.points {
			xMax, yMax = math.Max(xMax, p[0]), math.Max(yMax, p[1])
		}
	}
	xStep, yStep := tick(xMax), tick(yMax)
	xMax, yMax = math.Ceil(xMax/xStep)*xStep, math.Ceil(yMax/yStep)*yStep
	x := func(v float64) float64 { return marginLeft + v/xMax*plotWidth }
	y := func(v float64) float64 { return marginTop + plotHeight - v/yMax*plotHeight }

	var b bytes.Buffer
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n",
		chartWidth, chartHeight, chartWidth, chartHeight)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	fmt.Fprintf(&b, `<text x="%d" y="20" font-size="14" font-weight="bold">%s</text>`+"\n", marginLeft, html.EscapeString(c.title))
	for v := 0.0; v <= xMax+xStep/2; v += xStep {
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#ddd"/>`+"\n", x(v), y(0), x(v), y(yMax))
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="middle">%s</text>`+"\n", x(v), y(0)+16, number(v))
	}
	for v := 0.0; v <= yMax+yStep/2; v += yStep {
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#ddd"/>`+"\n", x(0), y(v), x(xMax), y(v))
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="end">%s</text>`+"\n", x(0)-6, y(v)+4, number(v))
	}
	fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle">%s</text>`+"\n", marginLeft+plotWidth/2, chartHeight-8, html.EscapeString(c.xLabel))
	fmt.Fprintf(&b, `<text transform="translate(14 %.1f) rotate(-90)" text-anchor="middle">%s</text>`+"\n", marginTop+plotHeight/2, html.EscapeString(c.yLabel))
	for i, s := range c.series {
		var pts bytes.Buffer
		for _, p := range s.points {
			fmt.Fprintf(&pts, "%.1f,%.1f ", x(p[0]), y(p[1]))
		}
		fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="2" points="%s"/>`+"\n", s.color, bytes.TrimSpace(pts.Bytes()))
		if len(s.points) <= 20 {
			for _, p := range s.points {
				fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="3" fill="%s"/>`+"\n", x(p[0]), y(p[1]), s.color)
			}
		}
		// The legend, between the title and the plot: two rows, in columns from the left.
		lx, ly := marginLeft+legendColumn*(i/2), 36+16*float64(i%2)
		fmt.Fprintf(&b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="%s" stroke-width="2"/>`+"\n", lx, ly, lx+24, ly, s.color)
		fmt.Fprintf(&b, `<text x="%d" y="%.1f">%s</text>`+"\n", lx+30, ly+4, html.EscapeString(s.name))
	}
	b.WriteString("</svg>\n")
	return b.Bytes()
}

// tick is a round step that divides 0..top into four to ten parts: 1, 2 or 5 times a power of
// ten.
func tick(top float64) float64 {
	if top <= 0 {
		return 1
	}
	step := math.Pow(10, math.Floor(math.Log10(top)))
	for _, m := range []float64{0.1, 0.2, 0.5, 1} {
		if top/(step*m) <= 10 {
			return step * m
		}
	}
	return step
}

func number(v float64) string {
	if v == math.Trunc(v) {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%g", v)
}

// convergeChart draws how many Apps, and how many Deployments of the baseline, were Available
// over time in the round with the median ratio.
func convergeChart(r Result) chart {
	line := func(curve []Point) [][2]float64 {
		out := make([][2]float64, 0, len(curve))
		for _, p := range curve {
			out = append(out, [2]float64{p.Seconds, float64(p.Available)})
		}
		return out
	}
	return chart{
		title:  fmt.Sprintf("Converging %d Apps: App Operator against its baseline (ratio %.2f)", r.Apps, r.Ratio),
		xLabel: "seconds since the first creation", yLabel: "Available",
		series: []series{
			{name: "baseline: Deployment and Service created directly", color: "#888888", points: line(r.BaselineCurve)},
			{name: "App Operator: Apps", color: "#1f77b4", points: line(r.ConvergeCurve)},
		},
	}
}

// heapChart draws the manager's heap per App against the number of Apps, from runs of
// different sizes, after convergence and after a restart.
func heapChart(results []Result) chart {
	results = slices.Clone(results)
	slices.SortFunc(results, func(a, b Result) int { return a.Apps - b.Apps })
	var converged, restarted, live, liveRestarted [][2]float64
	for _, r := range results {
		apps := float64(r.Apps)
		converged = append(converged, [2]float64{apps, r.HeapKiBPerApp})
		if r.HeapLiveBytes > 0 {
			live = append(live, [2]float64{apps, r.kibPerApp(r.HeapLiveBytes)})
		}
		if r.HeapKiBPerAppRestarted > 0 {
			restarted = append(restarted, [2]float64{apps, r.HeapKiBPerAppRestarted})
		}
		if r.HeapLiveRestartedBytes > 0 {
			liveRestarted = append(liveRestarted, [2]float64{apps, r.kibPerApp(r.HeapLiveRestartedBytes)})
		}
	}
	return chart{
		title:  "The manager's heap per App",
		xLabel: "Apps", yLabel: "KiB per App, after GC",
		series: []series{
			{name: "in use, after convergence", color: "#1f77b4", points: converged},
			{name: "in use, after a restart", color: "#ff7f0e", points: restarted},
			{name: "live objects, after convergence", color: "#2ca02c", points: live},
			{name: "live objects, after a restart", color: "#d62728", points: liveRestarted},
		},
	}
}
