package launch

import "testing"

// --record DIR[,slices|,calls]: only a known level after the last comma is
// one; a directory may hold commas.
func TestRecordSpec(t *testing.T) {
	for _, c := range []struct {
		spec   string
		dflt   bool
		dir    string
		slices bool
	}{
		{"rec", false, "rec", false},
		{"rec", true, "rec", true},
		{"rec,slices", false, "rec", true},
		{"rec,calls", true, "rec", false},
		{"a,b/rec,slices", false, "a,b/rec", true},
		{"a,b", false, "a,b", false},
		{"rec,slice", false, "rec,slice", false},
	} {
		if dir, slices := recordSpec(c.spec, c.dflt); dir != c.dir || slices != c.slices {
			t.Errorf("recordSpec(%q, %v) = %q, %v; want %q, %v", c.spec, c.dflt, dir, slices, c.dir, c.slices)
		}
	}
}
