package main

import (
	"context"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mycompany/app-operator/test/localcluster"
)

// watchNamespace starts a cache of one namespace's objects of obj's kind, fed by a watch, and
// returns it once synced. The benchmark waits on it: a list of every object each second would
// load the API server it measures, and more for Apps (JSON) than for Deployments (protobuf).
// The cache stops when ctx ends.
func watchNamespace(ctx context.Context, c *localcluster.Cluster, ns string, obj client.Object) (cache.Cache, error) {
	cc, err := cache.New(c.Config, cache.Options{
		Scheme:            c.Client.Scheme(),
		DefaultNamespaces: map[string]cache.Config{ns: {}},
		DefaultTransform:  cache.TransformStripManagedFields(),
	})
	if err != nil {
		return nil, err
	}
	if _, err := cc.GetInformer(ctx, obj); err != nil {
		return nil, err
	}
	go func() { _ = cc.Start(ctx) }()
	if !cc.WaitForCacheSync(ctx) {
		return nil, fmt.Errorf("watching %T in namespace %s: the cache did not sync", obj, ns)
	}
	return cc, nil
}
