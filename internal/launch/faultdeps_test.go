package launch

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// The fault-injecting wrapper is linked into bcsrun and bcsd only by the
// bcsfault build tag: a default build carries no fault hook.
func TestFaultHookOnlyUnderTag(t *testing.T) {
	const wrapper = "github.com/bcsmpi/bcsmpi/transport/transporttest"
	for _, tags := range []string{"", "bcsfault"} {
		out, err := exec.Command("go", "list", "-tags", tags, "-deps", "../../cmd/bcsrun", "../../cmd/bcsd").Output()
		if err != nil {
			t.Fatalf("go list -tags %q: %v", tags, err)
		}
		has := slices.Contains(strings.Fields(string(out)), wrapper)
		if has != (tags == "bcsfault") {
			t.Errorf("go list -tags %q -deps cmd/bcsrun cmd/bcsd: %s linked %v, want %v", tags, wrapper, has, tags == "bcsfault")
		}
	}
}
