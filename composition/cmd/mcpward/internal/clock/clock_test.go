package clock

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestFake(t *testing.T) {
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	f := NewFake(start)
	tk := f.NewTicker(time.Second)
	assert.Equal(t, 1, f.Tickers())
	select {
	case <-tk.C():
		t.Fatal("fired before its time")
	default:
	}
	f.Advance(999 * time.Millisecond)
	assert.Empty(t, tk.C())
	f.Advance(time.Millisecond)
	assert.Equal(t, start.Add(time.Second), <-tk.C())
	f.Advance(5 * time.Second)
	assert.Len(t, tk.C(), 1, "at most one pending tick")
	<-tk.C()
	tk.Stop()
	assert.Zero(t, f.Tickers())
	f.Advance(time.Hour)
	assert.Empty(t, tk.C())
	assert.Equal(t, start.Add(time.Hour+6*time.Second), f.Now())
}
