package backend

import (
	"errors"
	"strings"
	"testing"

	"github.com/deep500/deep500-go/network"
)

// This package imports no backend, so each known one is missing here: the
// error is ErrUnsupported and gives the import that links it in; an
// unknown name is another error, listing the known ones.
func TestGetMissingBackendNamesItsImport(t *testing.T) {
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
