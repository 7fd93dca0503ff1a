package apply

import (
	"encoding/json"
	"reflect"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// OwnedHashAnnotation exists only in the operator's cache, never on the API server. It
// carries OwnedHash of the child as the API server sent it, so that the cache can keep the
// child without its spec: when it equals the child's HashAnnotation and the hash of the
// configuration Apply would apply, the child is still exactly as the operator applied it.
const OwnedHashAnnotation = "cache.mycompany.com/owned-hash"

// OwnedHash hashes the fields of obj that the operator owns, as the API server's managedFields
// record them, the way applyConfiguration hashes a configuration before it adds
// HashAnnotation. Server-side apply gives the operator exactly the fields it applied, and takes
// away each one that someone else changes or removes, so a child the operator applied and
// nobody changed since hashes to its HashAnnotation. It returns "" when the operator owns
// nothing of obj, or obj cannot be read.
func OwnedHash(obj client.Object) string {
	set := ownedSet(obj)
	if set == nil {
		return ""
	}
	m, err := toMap(obj)
	if err != nil {
		return ""
	}
	owned, _ := ownedPart(m, set).(map[string]any)
	if owned == nil {
		return ""
	}
	// The object's identity is not a managed field, and HashAnnotation is not hashed.
	meta, _ := owned["metadata"].(map[string]any)
	if meta == nil {
		meta = map[string]any{}
		owned["metadata"] = meta
	}
	meta["name"], meta["namespace"] = obj.GetName(), obj.GetNamespace()
	if annotations, _ := meta["annotations"].(map[string]any); annotations != nil {
		delete(annotations, HashAnnotation)
	}
	prune(owned)
	hash, err := configurationHash(owned)
	if err != nil {
		return ""
	}
	return hash
}

// ownedSet returns the operator's managed fields of obj, decoded, or nil when it has none.
func ownedSet(obj client.Object) map[string]any {
	for _, e := range obj.GetManagedFields() {
		if e.Manager != FieldOwner || e.Operation != metav1.ManagedFieldsOperationApply || e.Subresource != "" || e.FieldsV1 == nil {
			continue
		}
		var set map[string]any
		if json.Unmarshal(e.FieldsV1.GetRawBytes(), &set) != nil {
			return nil
		}
		return set
	}
	return nil
}

// ownedPart returns the part of v that a node of a managed-fields set names (the FieldsV1
// format): "f:name" a field of a map, "k:{...}" the item of a list with those key fields,
// "v:..." the item of a list with that value, "i:N" the item at that index. An empty node
// owns the whole value; "." marks a map or item that is owned itself, with its fields listed
// beside.
func ownedPart(v any, node map[string]any) any {
	if len(node) == 0 {
		return v
	}
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(node))
		for k, child := range node {
			name, ok := strings.CutPrefix(k, "f:")
			if !ok {
				continue
			}
			if value, ok := t[name]; ok {
				sub, _ := child.(map[string]any)
				out[name] = ownedPart(value, sub)
			}
		}
		return out
	case []any:
		out := []any{}
		for i, item := range t {
			if sub, ok := itemNode(node, i, item); ok {
				out = append(out, ownedPart(item, sub))
			}
		}
		return out
	}
	return v
}

// itemNode returns the node of a list's set that names item, the i-th of its list.
func itemNode(node map[string]any, i int, item any) (map[string]any, bool) {
	for k, child := range node {
		sub, _ := child.(map[string]any)
		switch {
		case strings.HasPrefix(k, "k:"):
			var keys map[string]any
			fields, _ := item.(map[string]any)
			if json.Unmarshal([]byte(k[2:]), &keys) == nil && fields != nil && hasAll(fields, keys) {
				return sub, true
			}
		case strings.HasPrefix(k, "v:"):
			var value any
			if json.Unmarshal([]byte(k[2:]), &value) == nil && reflect.DeepEqual(value, item) {
				return sub, true
			}
		case strings.HasPrefix(k, "i:"):
			if n, err := strconv.Atoi(k[2:]); err == nil && n == i {
				return sub, true
			}
		}
	}
	return nil, false
}

func hasAll(fields, keys map[string]any) bool {
	for k, v := range keys {
		if !reflect.DeepEqual(fields[k], v) {
			return false
		}
	}
	return true
}
