package main

import (
	"slices"
	"testing"

	"github.com/spf13/pflag"

	"github.com/bcsmpi/bcsmpi/configs"
)

// TestMpirunArgs: mpirun's spellings before the program are translated or
// dropped; nothing from the program name on is touched.
func TestMpirunArgs(t *testing.T) {
	fs := pflag.NewFlagSet("bcsrun", pflag.ContinueOnError)
	fs.SetInterspersed(false)
	n := fs.IntP("np", "n", 1, "")
	fs.BoolP("verbose", "v", false, "")
	configs.Flags(fs)
	for _, tc := range []struct {
		in, want []string
		np       int
	}{
		{[]string{"-np", "4", "./a", "-np", "x"}, []string{"--np", "4", "./a", "-np", "x"}, 4},
		{[]string{"-np=3", "./a"}, []string{"--np=3", "./a"}, 3},
		{[]string{"--allow-run-as-root", "--oversubscribe", "-n", "2", "./a", "--oversubscribe"}, []string{"-n", "2", "./a", "--oversubscribe"}, 2},
		{[]string{"--timeslice", "1ms", "-np", "5", "-v", "./a"}, []string{"--timeslice", "1ms", "--np", "5", "-v", "./a"}, 5},
		{[]string{"--tag-output", "-np", "2", "--", "-np"}, []string{"--tag-output", "--np", "2", "--", "-np"}, 2},
	} {
		got := mpirunArgs(fs, tc.in)
		if !slices.Equal(got, tc.want) {
			t.Errorf("mpirunArgs(%q) = %q, want %q", tc.in, got, tc.want)
			continue
		}
		*n = 1
		if err := fs.Parse(got); err != nil || *n != tc.np {
			t.Errorf("%q: parse: %v, np %d, want %d", got, err, *n, tc.np)
		}
	}
}
