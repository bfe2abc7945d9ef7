package composition

import (
	"bufio"
	"context"
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestGatewayStdioFramesLines: the Gateway's stdio is mcpward's own line
// framing (stdiotransport.ServerTransport), not the SDK's IOTransport: a
// message spread over two lines, which the SDK's stream decoder would
// read and answer, ends the connection unanswered; one on a line is
// answered.
func TestGatewayStdioFramesLines(t *testing.T) {
	const (
		head = `{"jsonrpc":"2.0","id":1,"method":"initialize",`
		tail = `"params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`
	)
	for _, tc := range []struct {
		name     string
		line     string
		answered bool
	}{
		{name: "one line", line: head + tail + "\n", answered: true},
		{name: "two lines", line: head + "\n" + tail + "\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, g := gatewayRig(t, nil)
			inR, inW := io.Pipe()
			outR, outW := io.Pipe()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			served := make(chan error, 1)
			go func() { served <- g.ServeStdio(ctx, inR, outW) }()
			lines := make(chan string, 1)
			go func() {
				sc := bufio.NewScanner(outR)
				for sc.Scan() {
					lines <- sc.Text()
				}
				close(lines)
			}()
			_, err := io.WriteString(inW, tc.line)
			require.NoError(t, err)
			if tc.answered {
				select {
				case l := <-lines:
					assert.Contains(t, l, `"id":1,"result":{`)
				case <-time.After(10 * time.Second):
					t.Fatal("no answer")
				}
				_ = inW.Close()
				<-served
				return
			}
			select {
			case err := <-served:
				require.Error(t, err, "the connection ended on the split message")
			case <-time.After(10 * time.Second):
				t.Fatal("the connection did not end")
			}
			l, open := <-lines
			assert.False(t, open, "nothing was written: %.40s", l)
		})
	}
}
