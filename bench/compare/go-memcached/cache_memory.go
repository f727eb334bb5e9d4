// What controller-runtime's cache costs per object, for bench/runtime/informer-memory: the same
// objects opkit's cache is measured on, one kind at a time, each in a cache of its own, the heap
// after a collection before and after the cache has synced. Built into the memcached comparator
// (its module, its typed Memcached) and run as `go-memcached --cache-memory=pods,secrets,...`.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	goruntime "runtime"
	"runtime/debug"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// cacheKinds: what a Go operator caches for each kind. Built-in kinds and the Memcached typed, as
// client-go's and the comparator's own types; the Certificate unstructured (cert-manager's typed
// Certificate is not this operator's API), as a Go operator caches a CRD it has no types for.
func cacheKind(name string) (client.Object, client.ObjectList, error) {
	switch name {
	case "pods":
		return &corev1.Pod{}, &corev1.PodList{}, nil
	case "deployments":
		return &appsv1.Deployment{}, &appsv1.DeploymentList{}, nil
	case "secrets":
		return &corev1.Secret{}, &corev1.SecretList{}, nil
	case "secrets-metadata":
		// Metadata only, as controller-runtime's OnlyMetadata.
		m := &metav1.PartialObjectMetadata{}
		m.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
		l := &metav1.PartialObjectMetadataList{}
		l.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("SecretList"))
		return m, l, nil
	case "memcacheds":
		return &Memcached{}, &MemcachedList{}, nil
	case "certificates":
		u := &unstructured.Unstructured{}
		u.SetAPIVersion("cert.opkit.dev/v1")
		u.SetKind("Certificate")
		l := &unstructured.UnstructuredList{}
		l.SetAPIVersion("cert.opkit.dev/v1")
		l.SetKind("CertificateList")
		return u, l, nil
	}
	return nil, nil, fmt.Errorf("unknown kind %q", name)
}

// settledHeap: the live heap after collections, as bench/report.ts's settledHeap reads Node's.
func settledHeap() uint64 {
	var m goruntime.MemStats
	for i := 0; i < 3; i++ {
		goruntime.GC()
	}
	debug.FreeOSMemory()
	goruntime.ReadMemStats(&m)
	return m.HeapAlloc
}

func measureCacheMemory(cfg *rest.Config, scheme *runtime.Scheme, namespace string, kinds []string, stripManagedFields bool) error {
	for _, name := range kinds {
		obj, list, err := cacheKind(name)
		if err != nil {
			return err
		}
		before := settledHeap()
		ctx, cancel := context.WithCancel(context.Background())
		opts := cache.Options{Scheme: scheme, DefaultNamespaces: map[string]cache.Config{namespace: {}}}
		if stripManagedFields {
			// What opkit's cache does to every object; controller-runtime's users opt in with this transform.
			opts.DefaultTransform = cache.TransformStripManagedFields()
		}
		c, err := cache.New(cfg, opts)
		if err != nil {
			cancel()
			return err
		}
		go func() { _ = c.Start(ctx) }()
		if _, err := c.GetInformer(ctx, obj); err != nil {
			cancel()
			return err
		}
		if !c.WaitForCacheSync(ctx) {
			cancel()
			return fmt.Errorf("%s: the cache did not sync", name)
		}
		if err := c.List(ctx, list); err != nil {
			cancel()
			return err
		}
		n := len(mustItems(list))
		list = nil
		after := settledHeap()
		out, _ := json.Marshal(map[string]any{"kind": name, "objects": n, "heapBytesPerObject": float64(after-before) / float64(max(n, 1)), "stripManagedFields": stripManagedFields})
		fmt.Println(string(out))
		cancel()
		time.Sleep(200 * time.Millisecond) // the informer's goroutines end before the next baseline
	}
	return nil
}

func mustItems(list client.ObjectList) []runtime.Object {
	items, err := meta.ExtractList(list)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	return items
}

func cacheMemoryKinds(flagValue string) []string {
	var kinds []string
	for _, k := range strings.Split(flagValue, ",") {
		if k = strings.TrimSpace(k); k != "" {
			kinds = append(kinds, k)
		}
	}
	return kinds
}
