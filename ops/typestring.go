package ops

import (
	"slices"
	"strings"
)

// TypeRank orders the type strings of a type constraint ("tensor(float)",
// "seq(tensor(int64))", ...) for choosing among them: by where the
// element type stands in prefer (unlisted ones after every listed one),
// plain tensors first, then sequences, then the other kinds.
func TypeRank(t string, prefer []string) int {
	elem := t
	for _, p := range []string{"optional(", "seq(", "tensor("} {
		if i := strings.LastIndex(elem, p); i >= 0 {
			elem = elem[i+len(p):]
		}
	}
	elem = strings.TrimRight(elem, ")")
	r := slices.Index(prefer, elem)
	if r < 0 {
		r = len(prefer) + 1
	}
	switch {
	case strings.HasPrefix(t, "tensor("):
	case strings.HasPrefix(t, "seq("):
		r += 100
	default:
		r += 200
	}
	return r
}
