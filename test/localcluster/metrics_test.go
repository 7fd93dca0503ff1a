package localcluster

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/pprof"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestHeapAfterGCReadsTheMemStatsOfTheProfile(t *testing.T) {
	mux := http.NewServeMux()
	mux.Handle("/debug/pprof/heap", pprof.Handler("heap"))
	server := httptest.NewServer(mux)
	defer server.Close()

	path := filepath.Join(t.TempDir(), "heap.pb.gz")
	heap, err := HeapAfterGC(context.Background(), strings.TrimPrefix(server.URL, "http://"), path)
	require.NoError(t, err)
	require.Positive(t, heap.AllocBytes)
	require.GreaterOrEqual(t, heap.InuseBytes, heap.AllocBytes, "spans hold at least the live objects")

	profile, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, []byte{0x1f, 0x8b}, profile[:2], "a gzipped protobuf profile")

	_, err = HeapAfterGC(context.Background(), strings.TrimPrefix(server.URL, "http://")+"/nothing", path)
	require.Error(t, err)
}
