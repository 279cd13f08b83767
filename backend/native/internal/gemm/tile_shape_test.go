package gemm

import "testing"

// tileShape keeps the cache-sized tiles when they already give every
// goroutine two, and otherwise cuts narrower, then shorter, tiles that are
// whole micro-kernel blocks and leave every goroutine work.
func TestTileShape(t *testing.T) {
	for _, tc := range []struct {
		m, n, threads int
		mc, nc        int
	}{
		{1024, 1024, 2, mcTile, ncTile}, // 11 × 2 tiles already
		{100, 100, 1, mcTile, ncTile},   // one goroutine: no cut
		{16, 1024, 2, mcTile, 256},      // a CIFAR ResNet layer: 4 column tiles
		{64, 64, 2, 18, 64},             // one column block: rows are cut
		{576, 49, 2, mcTile, ncTile},    // 6 row tiles already
		{32, 196, 2, mcTile, 64},        // 4 column tiles of 64, the last of 4
	} {
		mc, nc := tileShape(tc.m, tc.n, 6, 64, tc.threads)
		if mc != tc.mc || nc != tc.nc {
			t.Errorf("m=%d n=%d threads=%d: tiles %dx%d, want %dx%d", tc.m, tc.n, tc.threads, mc, nc, tc.mc, tc.nc)
		}
		if mc%6 != 0 || nc%64 != 0 {
			t.Errorf("m=%d n=%d: tiles %dx%d are not whole 6x64 blocks", tc.m, tc.n, mc, nc)
		}
		tiles := ((tc.m + mc - 1) / mc) * ((tc.n + nc - 1) / nc)
		if tc.threads > 1 && tiles < tc.threads {
			t.Errorf("m=%d n=%d threads=%d: %d tiles leave goroutines idle", tc.m, tc.n, tc.threads, tiles)
		}
	}
}
