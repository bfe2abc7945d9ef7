package progress

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/clock"
)

// WaitAfter is when Wait's first note is written.
const WaitAfter = 3 * time.Second

// Wait writes "still waiting for LABEL (5s)…" notes to w while something
// runs: the first after WaitAfter, then at 10s, 30s and 1m, then every
// minute. label must be safe for the terminal. The returned stop ends the
// notes; once it returns nothing more is written. clk nil means the system
// clock.
func Wait(w io.Writer, clk clock.Clock, label string) (stop func()) {
	if clk == nil {
		clk = clock.Real()
	}
	start := clk.Now()
	t := clk.NewTicker(time.Second)
	done, ended := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(ended)
		defer t.Stop()
		due := WaitAfter
		for {
			select {
			case <-done:
				return
			case <-t.C():
			}
			elapsed := clk.Now().Sub(start)
			if elapsed < due {
				continue
			}
			select {
			case <-done:
				return
			default:
			}
			fmt.Fprintf(w, "still waiting for %s (%s)…\n", label, elapsed.Truncate(time.Second))
			due = nextNote(elapsed)
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			close(done)
			<-ended
		})
	}
}
