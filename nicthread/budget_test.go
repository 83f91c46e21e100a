package nicthread

import (
	"testing"
	"time"
)

// TestAutoBudgetBounded: whatever the host's rate, the budget is a multiple
// of 64 KiB inside the bounds, and a longer slice never gets a smaller
// bound than the extremes allow.
func TestAutoBudgetBounded(t *testing.T) {
	for _, slice := range []time.Duration{time.Nanosecond, 500 * time.Microsecond, time.Hour} {
		b := AutoBudget(slice)
		if b < AutoBudgetMin || b > AutoBudgetMax || b%(64<<10) != 0 {
			t.Errorf("AutoBudget(%v) = %d, want a multiple of 64 KiB in %d .. %d", slice, b, AutoBudgetMin, AutoBudgetMax)
		}
	}
	if b := AutoBudget(time.Nanosecond); b != AutoBudgetMin {
		t.Errorf("AutoBudget(1ns) = %d, want the minimum %d", b, AutoBudgetMin)
	}
	if b := AutoBudget(time.Hour); b != AutoBudgetMax {
		t.Errorf("AutoBudget(1h) = %d, want the maximum %d", b, AutoBudgetMax)
	}
}
