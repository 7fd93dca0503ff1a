package localcluster

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appv1 "github.com/mycompany/app-operator/api/v1"
)

// Probe is a client that writes and reads Apps without pause, as users and GitOps tools do,
// and counts what fails. It never retries: each refused write and failed read is one that a
// user would have seen. Its writes go through the mutating and validating webhooks. A legacy
// probe also writes and reads through v1alpha1, and so through the conversion webhook: it is
// for releases that serve v1alpha1 before and after what it watches.
type Probe struct {
	c         client.Client
	namespace string
	legacy    bool
	cancel    context.CancelFunc
	done      chan struct{}

	mu      sync.Mutex
	figures ProbeFigures
}

// ProbeFigures are what a Probe saw.
type ProbeFigures struct {
	Writes, Refused, Reads, Failed int
	// Errors are the first errors seen, and when.
	Errors []string
	// Duration is how long the probe ran.
	Duration time.Duration
}

func (f ProbeFigures) String() string {
	return fmt.Sprintf("writes=%d refused=%d reads=%d failed=%d over %.0fs", f.Writes, f.Refused, f.Reads, f.Failed, f.Duration.Seconds())
}

// probeApps is how many Apps the probe creates and then keeps changing.
const probeApps = 4

// StartProbe creates the probe's Apps in namespace, on kwok's fake nodes, unless they exist,
// and starts writing and reading them until Stop; through v1alpha1 too if legacy. Creating
// them is not what the probe measures: an App that exists is not created again (which would
// go through the webhooks), and a refused creation is tried again for up to a minute, as
// OLM may still be handing the webhooks a new certificate when a release has just settled.
func (c *Cluster) StartProbe(ctx context.Context, namespace string, legacy bool) (*Probe, error) {
	for i := range probeApps {
		key := client.ObjectKey{Namespace: namespace, Name: probeName(i)}
		err := c.PollEvery(ctx, time.Second, time.Minute, "the probe's App "+key.String(), func(ctx context.Context) (bool, error) {
			if err := c.Client.Get(ctx, key, &appv1.App{}); !apierrors.IsNotFound(err) {
				return err == nil, err
			}
			app := &appv1.App{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name},
				Spec: appv1.AppSpec{Image: "registry.example.com/probe/web:1.0", Replicas: ptr.To(int32(1))}}
			OnFakeNodes(&app.Spec)
			err := client.IgnoreAlreadyExists(c.Client.Create(ctx, app))
			return err == nil, err
		})
		if err != nil {
			return nil, fmt.Errorf("creating the probe's App: %w", err)
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	p := &Probe{c: c.Client, namespace: namespace, legacy: legacy, cancel: cancel, done: make(chan struct{})}
	go p.run(ctx)
	return p, nil
}

func probeName(i int) string { return fmt.Sprintf("probe-%d", i) }

// Stop ends the probe and returns its figures.
func (p *Probe) Stop() ProbeFigures {
	p.cancel()
	<-p.done
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.figures
}

// run writes a change to one App's spec, then reads the namespace's Apps, every interval. A
// legacy probe writes in turn through v1 and v1alpha1, and reads through v1alpha1.
func (p *Probe) run(ctx context.Context) {
	defer close(p.done)
	start := time.Now()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for i := 0; ; i++ {
		select {
		case <-ctx.Done():
			p.mu.Lock()
			p.figures.Duration = time.Since(start)
			p.mu.Unlock()
			return
		case <-tick.C:
		}
		p.record(ctx, true, p.write(ctx, i))
		p.record(ctx, false, p.read(ctx))
	}
}

// write changes an App's spec (an annotation of its pods), with a merge patch, which needs no
// resourceVersion and so meets no conflict.
func (p *Probe) write(ctx context.Context, i int) error {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	key := client.ObjectKey{Namespace: p.namespace, Name: probeName(i % probeApps)}
	var obj client.Object = &appv1.App{}
	body := fmt.Sprintf(`{"spec":{"podAnnotations":{"probe":"%d"}}}`, i)
	if p.legacy && i%2 == 1 {
		// v1alpha1 has no podAnnotations: its writes change the replica count, 1 or 2.
		obj = LegacyApp(metav1.ObjectMeta{}, "", 0)
		body = fmt.Sprintf(`{"spec":{"replicas":%d}}`, 1+i%4/2)
	}
	obj.SetNamespace(key.Namespace)
	obj.SetName(key.Name)
	return p.c.Patch(ctx, obj, client.RawPatch(types.MergePatchType, []byte(body)))
}

func (p *Probe) read(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	var list client.ObjectList = &appv1.AppList{}
	if p.legacy {
		list = LegacyAppList()
	}
	return p.c.List(ctx, list, client.InNamespace(p.namespace))
}

func (p *Probe) record(ctx context.Context, write bool, err error) {
	if ctx.Err() != nil {
		return // cut short by Stop, not failed
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	f := &p.figures
	if write {
		f.Writes++
	} else {
		f.Reads++
	}
	if err == nil {
		return
	}
	if write {
		f.Refused++
	} else {
		f.Failed++
	}
	if len(f.Errors) < 10 {
		what := "read"
		if write {
			what = "write"
		}
		f.Errors = append(f.Errors, fmt.Sprintf("%s %s: %s", time.Now().Format("15:04:05.000"), what, strings.TrimSpace(err.Error())))
	}
}

// ProbeDuring runs a Probe (legacy or not) in namespace while do runs, and a few seconds
// after, for what settles late, and returns its figures.
func (c *Cluster) ProbeDuring(ctx context.Context, namespace string, legacy bool, do func()) (ProbeFigures, error) {
	p, err := c.StartProbe(ctx, namespace, legacy)
	if err != nil {
		return ProbeFigures{}, err
	}
	do()
	time.Sleep(3 * time.Second)
	return p.Stop(), nil
}

// Report says what the probe saw, in a PROBE line of figures and its first errors.
func (f ProbeFigures) Report(phase string) string {
	out := fmt.Sprintf("PROBE phase=%q %s", phase, f)
	for _, e := range f.Errors {
		out += "\n    " + e
	}
	return out
}
