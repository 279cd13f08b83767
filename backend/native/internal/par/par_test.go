package par

import (
	"sync"
	"testing"
)

// For visits every index of the range exactly once, whatever the split,
// and runs small ranges on the calling goroutine in one chunk.
func TestForCoversRangeOnce(t *testing.T) {
	for _, tc := range []struct{ n, threads, minChunk int }{
		{0, 4, 1}, {1, 4, 1}, {7, 3, 1}, {100, 4, 10}, {100, 4, 60}, {1000, 0, 1}, {5, 8, 0}, {97, 2, 1},
	} {
		seen := make([]int, tc.n)
		var mu sync.Mutex
		calls := 0
		For(tc.n, tc.threads, tc.minChunk, func(lo, hi int) {
			mu.Lock()
			calls++
			mu.Unlock()
			for i := lo; i < hi; i++ {
				seen[i]++
			}
		})
		for i, c := range seen {
			if c != 1 {
				t.Fatalf("n=%d threads=%d minChunk=%d: index %d visited %d times", tc.n, tc.threads, tc.minChunk, i, c)
			}
		}
		if tc.n == 0 && calls != 0 {
			t.Fatalf("n=0: body called %d times", calls)
		}
		if tc.n > 0 && tc.n/max(tc.minChunk, 1) <= 1 && calls != 1 {
			t.Fatalf("n=%d minChunk=%d: split into %d chunks, want 1", tc.n, tc.minChunk, calls)
		}
	}
}
