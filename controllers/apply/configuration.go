package apply

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"reflect"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// applyConfiguration turns a desired object into the fields of a server-side apply: no type
// (objects read back may lack it), no status, no empty values (which would claim fields the
// operator does not set), and the hash of everything else in HashAnnotation.
func applyConfiguration(desired client.Object) (map[string]any, error) {
	m, err := toMap(desired)
	if err != nil {
		return nil, err
	}
	for _, k := range []string{"apiVersion", "kind", "status"} {
		delete(m, k)
	}
	prune(m)
	hash, err := configurationHash(m)
	if err != nil {
		return nil, err
	}
	meta, _ := m["metadata"].(map[string]any)
	if meta == nil {
		return nil, fmt.Errorf("object has no metadata")
	}
	annotations, _ := meta["annotations"].(map[string]any)
	if annotations == nil {
		annotations = map[string]any{}
		meta["annotations"] = annotations
	}
	annotations[HashAnnotation] = hash
	return m, nil
}

// configurationHash is the hash of a configuration, as HashAnnotation carries it.
func configurationHash(m map[string]any) (string, error) {
	raw, err := json.Marshal(m)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:8]), nil
}

func toMap(obj client.Object) (map[string]any, error) {
	raw, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	return m, json.Unmarshal(raw, &m)
}

// prune removes null values and empty objects, recursively.
func prune(v any) bool {
	switch t := v.(type) {
	case nil:
		return true
	case map[string]any:
		for k, child := range t {
			if prune(child) {
				delete(t, k)
			}
		}
		return len(t) == 0
	case []any:
		for _, child := range t {
			prune(child)
		}
	}
	return false
}

// contains reports whether have holds everything in want. Objects may have more fields than
// wanted (defaults the API server filled in, fields others own). Lists of named items match
// by name and may hold more items, as server-side apply merges them; other lists must match
// item by item.
func contains(have, want any) bool {
	switch w := want.(type) {
	case map[string]any:
		h, ok := have.(map[string]any)
		if !ok {
			return false
		}
		for k, wv := range w {
			if hv, ok := h[k]; !ok || !contains(hv, wv) {
				return false
			}
		}
		return true
	case []any:
		h, ok := have.([]any)
		if !ok {
			return false
		}
		if names, ok := byName(h); ok && isNamed(w) {
			for _, item := range w {
				if hv, ok := names[nameOf(item)]; !ok || !contains(hv, item) {
					return false
				}
			}
			return true
		}
		if len(h) != len(w) {
			return false
		}
		for i := range w {
			if !contains(h[i], w[i]) {
				return false
			}
		}
		return true
	default:
		return reflect.DeepEqual(have, want)
	}
}

func nameOf(item any) string {
	m, _ := item.(map[string]any)
	name, _ := m["name"].(string)
	return name
}

func isNamed(items []any) bool {
	for _, item := range items {
		if nameOf(item) == "" {
			return false
		}
	}
	return len(items) > 0
}

func byName(items []any) (map[string]any, bool) {
	if !isNamed(items) {
		return nil, false
	}
	names := make(map[string]any, len(items))
	for _, item := range items {
		names[nameOf(item)] = item
	}
	return names, true
}

// hashOf returns the hash applyConfiguration put in a configuration.
func hashOf(want map[string]any) string {
	meta, _ := want["metadata"].(map[string]any)
	annotations, _ := meta["annotations"].(map[string]any)
	hash, _ := annotations[HashAnnotation].(string)
	return hash
}
