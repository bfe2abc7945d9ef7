package mcpserve

import (
	"context"
	"io"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// countingTransport is the SDK's IOTransport, counting its connections.
type countingTransport struct {
	mcp.IOTransport
	n *atomic.Int32
}

func (t *countingTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	t.n.Add(1)
	return t.IOTransport.Connect(ctx)
}

// TestServeStdioUsesTheTransportOption: ServeStdio serves over the
// transport Options.StdioTransport builds from its in and out.
func TestServeStdioUsesTheTransportOption(t *testing.T) {
	var n atomic.Int32
	s := New(newFake(Catalog{Tools: []Tool{{Name: "t1", InputSchema: objSchema}}}), &Options{
		StdioTransport: func(in io.ReadCloser, out io.WriteCloser) mcp.Transport {
			return &countingTransport{IOTransport: mcp.IOTransport{Reader: in, Writer: out}, n: &n}
		},
	})
	t.Cleanup(s.Close)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	served := make(chan error, 1)
	go func() { served <- s.ServeStdio(ctx, inR, outW) }()
	c := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "0"}, nil)
	cs, err := c.Connect(ctx, &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	require.NoError(t, err)
	assert.Equal(t, []string{"t1"}, names(t, cs))
	require.NoError(t, cs.Close())
	require.NoError(t, <-served)
	assert.Equal(t, int32(1), n.Load())
}
