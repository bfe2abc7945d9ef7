package clientkit

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeDriver connects in about delay and counts connects and closes.
type fakeDriver struct {
	delay            time.Duration
	fail             error
	connects, closes int
	targets          []Target
}

type fakeConn struct{ d *fakeDriver }

func (c fakeConn) Tools() int                 { return 1 }
func (c fakeConn) Call(context.Context) error { return nil }
func (c fakeConn) Close() error               { c.d.closes++; return nil }

func (d *fakeDriver) Connect(_ context.Context, t Target) (Conn, error) {
	if d.fail != nil {
		return nil, d.fail
	}
	d.connects++
	d.targets = append(d.targets, t)
	time.Sleep(d.delay)
	return fakeConn{d}, nil
}

func (d *fakeDriver) ConnectMany(context.Context, []Target) (io.Closer, error) {
	return nil, errors.New("not used")
}

// TestServeConnects: one connect of the small server per line read, its
// time written as one line, each connection closed; the end of the input
// ends it, a failed connect fails it.
func TestServeConnects(t *testing.T) {
	d := &fakeDriver{delay: 2 * time.Millisecond}
	var out bytes.Buffer
	o := Options{Transport: "stdio", Era: "legacy", Server: "/bin/benchserver", Tools: 99}
	require.NoError(t, ServeConnects(context.Background(), d, o, strings.NewReader("connect\nconnect\nconnect\n"), &out))
	assert.Equal(t, 3, d.connects)
	assert.Equal(t, 3, d.closes)
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	require.Len(t, lines, 3)
	for _, l := range lines {
		ns, err := strconv.ParseInt(l, 10, 64)
		require.NoError(t, err)
		assert.GreaterOrEqual(t, time.Duration(ns), d.delay)
	}
	for _, tg := range d.targets {
		assert.Equal(t, []string{"-tools", "0"}, tg.Args, "the small server")
	}

	d = &fakeDriver{fail: errors.New("refused")}
	err := ServeConnects(context.Background(), d, o, strings.NewReader("connect\n"), &out)
	assert.ErrorContains(t, err, "refused")
}
