package localcluster

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The API server calls webhooks through the "cluster" network of its egress selector: it
// resolves the webhook's Service to its ClusterIP and asks a proxy on a unix socket to
// `CONNECT <clusterIP>:<port>`. Pods on kwok's nodes are not real, so EgressProxy answers
// instead: it finds the Service of that ClusterIP and port and connects to the local process
// registered for it. TLS is end to end: the API server still verifies the webhook's
// certificate against the caBundle of the webhook configuration, for <service>.<namespace>.svc.

// egressConfig is the API server's --egress-selector-config-file for a proxy on socket.
func egressConfig(socket string) string {
	return fmt.Sprintf(`apiVersion: apiserver.k8s.io/v1beta1
kind: EgressSelectorConfiguration
egressSelections:
- name: cluster
  connection:
    proxyProtocol: HTTPConnect
    transport:
      uds:
        udsName: %s
- name: controlplane
  connection:
    proxyProtocol: Direct
- name: etcd
  connection:
    proxyProtocol: Direct
`, socket)
}

// Routes map Services (namespace/name) to local addresses. They are kept in a file, so that a
// proxy running as a process of its own sees the routes the harness adds.
type Routes struct {
	path string
	mu   sync.Mutex
}

// Set routes a Service to a local address, such as 127.0.0.1:9443.
func (r *Routes) Set(namespace, name, addr string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	m, err := r.load()
	if err != nil {
		return err
	}
	m[namespace+"/"+name] = addr
	raw, err := json.Marshal(m)
	if err != nil {
		return err
	}
	tmp := r.path + ".tmp"
	if err := os.WriteFile(tmp, raw, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, r.path)
}

func (r *Routes) load() (map[string]string, error) {
	m := map[string]string{}
	raw, err := os.ReadFile(r.path)
	if os.IsNotExist(err) {
		return m, nil
	}
	if err != nil {
		return nil, err
	}
	return m, json.Unmarshal(raw, &m)
}

// ServeEgress answers the API server's CONNECT requests on socket until ctx ends, resolving
// ClusterIPs with c and local addresses with the routes in routesFile.
func ServeEgress(ctx context.Context, socket, routesFile string, c client.Reader) error {
	_ = os.Remove(socket)
	if err := os.MkdirAll(filepath.Dir(socket), 0o755); err != nil {
		return err
	}
	ln, err := net.Listen("unix", socket)
	if err != nil {
		return err
	}
	go func() { <-ctx.Done(); ln.Close() }()
	routes := &Routes{path: routesFile}
	for {
		conn, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		go tunnel(ctx, conn, routes, c)
	}
}

func tunnel(ctx context.Context, conn net.Conn, routes *Routes, c client.Reader) {
	defer conn.Close()
	br := bufio.NewReader(conn)
	req, err := http.ReadRequest(br)
	if err != nil || req.Method != http.MethodConnect {
		fmt.Fprint(conn, "HTTP/1.1 405 Method Not Allowed\r\n\r\n")
		return
	}
	target, err := resolve(ctx, req.Host, routes, c)
	if err != nil {
		fmt.Fprintf(conn, "HTTP/1.1 502 Bad Gateway\r\nContent-Length: %d\r\n\r\n%s", len(err.Error()), err)
		return
	}
	upstream, err := net.Dial("tcp", target)
	if err != nil {
		fmt.Fprint(conn, "HTTP/1.1 503 Service Unavailable\r\n\r\n")
		return
	}
	defer upstream.Close()
	// Exactly this and nothing more: the API server starts TLS right after the blank line.
	if _, err := io.WriteString(conn, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		return
	}
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(upstream, br); done <- struct{}{} }()
	go func() { _, _ = io.Copy(conn, upstream); done <- struct{}{} }()
	<-done
}

// resolve maps <clusterIP>:<port> to the local address routed for that Service.
func resolve(ctx context.Context, hostport string, routes *Routes, c client.Reader) (string, error) {
	host, portStr, err := net.SplitHostPort(hostport)
	if err != nil {
		return "", err
	}
	port, _ := strconv.Atoi(portStr)
	var services corev1.ServiceList
	if err := c.List(ctx, &services); err != nil {
		return "", err
	}
	m, err := routes.load()
	if err != nil {
		return "", err
	}
	for _, s := range services.Items {
		if s.Spec.ClusterIP != host {
			continue
		}
		for _, p := range s.Spec.Ports {
			if int(p.Port) == port {
				if addr, ok := m[s.Namespace+"/"+s.Name]; ok {
					return addr, nil
				}
				return "", fmt.Errorf("no local process serves Service %s/%s", s.Namespace, s.Name)
			}
		}
	}
	return "", fmt.Errorf("no Service has ClusterIP and port %s", hostport)
}
