package backend

import (
	"errors"
	"strings"
	"testing"

	"github.com/deep500/deep500-go/network"
)

// A known backend not linked in (its registration taken out here: this
// package's examples link the native one) is ErrUnsupported, giving the
// import that links it in; an unknown name is another error, listing the
// known ones.
func TestGetMissingBackendNamesItsImport(t *testing.T) {
	mu.Lock()
	saved := backends
	backends = map[string]Backend{}
	mu.Unlock()
	defer func() {
		mu.Lock()
		backends = saved
		mu.Unlock()
	}()
	for _, name := range Known {
		_, err := Get(name)
		want := `import _ "github.com/deep500/deep500-go/backend/` + name + `"`
		if !errors.Is(err, network.ErrUnsupported) || !strings.Contains(err.Error(), want) {
			t.Errorf("Get(%q) = %v, want ErrUnsupported with %s", name, err, want)
		}
	}
	if _, err := Get("tensorflow"); err == nil || errors.Is(err, network.ErrUnsupported) || !strings.Contains(err.Error(), "native") {
		t.Errorf("Get(tensorflow) = %v, want an unknown-backend error listing the known ones", err)
	}
}
