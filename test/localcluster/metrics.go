package localcluster

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"

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

// Heap is a manager's heap right after a garbage collection, from runtime.MemStats.
type Heap struct {
	// InuseBytes is MemStats.HeapInuse, the figure go_memstats_heap_inuse_bytes reports: the
	// bytes of every span holding a live object.
	InuseBytes float64
	// AllocBytes is MemStats.HeapAlloc: the bytes of the live objects themselves.
	AllocBytes float64
}

// HeapAfterGC reads a manager's heap through its pprof endpoint at pprofAddr. It keeps a heap
// profile at profilePath for `go tool pprof`, then asks for the profile in text form, which
// collects the garbage first and ends with the MemStats read right after. Reading them there,
// not from a metrics scrape, keeps out what the scrape's own collectors allocate.
func HeapAfterGC(ctx context.Context, pprofAddr, profilePath string) (Heap, error) {
	url := "http://" + pprofAddr + "/debug/pprof/heap?gc=1"
	profile, err := os.Create(profilePath)
	if err != nil {
		return Heap{}, err
	}
	err = get(ctx, url, profile)
	if cerr := profile.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return Heap{}, err
	}
	var text bytes.Buffer
	if err := get(ctx, url+"&debug=1", &text); err != nil {
		return Heap{}, err
	}
	var h Heap
	for _, line := range strings.Split(text.String(), "\n") {
		if v, ok := strings.CutPrefix(line, "# HeapInuse = "); ok {
			h.InuseBytes, err = strconv.ParseFloat(v, 64)
		} else if v, ok := strings.CutPrefix(line, "# HeapAlloc = "); ok {
			h.AllocBytes, err = strconv.ParseFloat(v, 64)
		}
		if err != nil {
			return Heap{}, fmt.Errorf("reading the heap profile's MemStats: %w", err)
		}
	}
	if h.InuseBytes == 0 || h.AllocBytes == 0 {
		return Heap{}, fmt.Errorf("the heap profile from %s has no MemStats", url)
	}
	return h, nil
}

func get(ctx context.Context, url string, w io.Writer) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	_, err = io.Copy(w, resp.Body)
	return err
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
