package framework

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"sort"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Scraper reads a manager's authenticated metrics endpoint with a ServiceAccount token.
type Scraper struct {
	url, token string
	client     *http.Client
}

// NewScraper scrapes metricsURL with a bearer token.
func NewScraper(metricsURL, token string) *Scraper {
	return &Scraper{url: metricsURL, token: token, client: &http.Client{Transport: &http.Transport{
		// The manager's metrics certificate is self-signed.
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec
	}}}
}

// Families scrapes the metrics.
func (s *Scraper) Families(ctx context.Context) (map[string]*dto.MetricFamily, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+s.token)
	resp, err := s.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(resp.Body)
		return nil, fmt.Errorf("GET %s: %s: %s", s.url, resp.Status, body)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	return parser.TextToMetricFamilies(resp.Body)
}

// HeapAfterGC collects the manager's garbage through its pprof endpoint at pprofAddr (a heap
// profile with gc=1 runs the collector first), keeps that profile at profilePath for `go tool
// pprof`, then reads go_memstats_heap_inuse_bytes.
func (s *Scraper) HeapAfterGC(ctx context.Context, pprofAddr, profilePath string) (float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+pprofAddr+"/debug/pprof/heap?gc=1", nil)
	if err != nil {
		return 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	profile, err := os.Create(profilePath)
	if err != nil {
		return 0, err
	}
	_, err = io.Copy(profile, resp.Body)
	if cerr := profile.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return 0, err
	}
	f, err := s.Families(ctx)
	if err != nil {
		return 0, err
	}
	return Gauge(f, "go_memstats_heap_inuse_bytes", "", "")
}

// Gauge sums a gauge over the series whose label has the value; an empty label takes every
// series. It fails when there is no such series.
func Gauge(f map[string]*dto.MetricFamily, name, label, value string) (float64, error) {
	sum, n := 0.0, 0
	for _, m := range f[name].GetMetric() {
		if hasLabel(m, label, value) {
			sum += m.GetGauge().GetValue()
			n++
		}
	}
	if n == 0 {
		return 0, fmt.Errorf("no series %s{%s=%q}", name, label, value)
	}
	return sum, nil
}

// Counter sums a counter over the series whose label has the value.
func Counter(f map[string]*dto.MetricFamily, name, label, value string) float64 {
	sum := 0.0
	for _, m := range f[name].GetMetric() {
		if hasLabel(m, label, value) {
			sum += m.GetCounter().GetValue()
		}
	}
	return sum
}

func hasLabel(m *dto.Metric, label, value string) bool {
	if label == "" {
		return true
	}
	for _, l := range m.GetLabel() {
		if l.GetName() == label && l.GetValue() == value {
			return true
		}
	}
	return false
}

// Quantile estimates a quantile of a histogram series from its buckets, interpolating
// linearly within the bucket it falls in, as Prometheus' histogram_quantile does.
func Quantile(f map[string]*dto.MetricFamily, name, label, value string, q float64) (float64, error) {
	for _, m := range f[name].GetMetric() {
		if !hasLabel(m, label, value) {
			continue
		}
		h := m.GetHistogram()
		buckets := h.GetBucket()
		sort.Slice(buckets, func(i, j int) bool { return buckets[i].GetUpperBound() < buckets[j].GetUpperBound() })
		total := float64(h.GetSampleCount())
		if total == 0 {
			return 0, fmt.Errorf("%s has no samples", name)
		}
		rank := q * total
		lower, below := 0.0, 0.0
		for _, b := range buckets {
			count := float64(b.GetCumulativeCount())
			if count >= rank {
				upper := b.GetUpperBound()
				if math.IsInf(upper, 1) {
					return lower, nil
				}
				return lower + (upper-lower)*(rank-below)/(count-below), nil
			}
			lower, below = b.GetUpperBound(), count
		}
		return lower, nil
	}
	return 0, fmt.Errorf("no series %s{%s=%q}", name, label, value)
}
