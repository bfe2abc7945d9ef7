package portstest

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/ports"
)

func TestElicitor(t *testing.T) {
	var _ ports.Elicitor = (*Elicitor)(nil)
	e := NewElicitor(nil)
	form := ports.ElicitRequest{Mode: ports.ElicitForm, Schema: ports.ElicitSchema{Fields: []ports.ElicitField{{Name: "a", Type: ports.FieldString, Default: "x"}}}}
	res, err := e.Elicit(context.Background(), form)
	require.NoError(t, err)
	assert.Equal(t, ports.ElicitResult{Action: ports.ElicitAccept, Content: map[string]any{"a": "x"}}, res)
	res, err = e.Elicit(context.Background(), ports.ElicitRequest{Mode: ports.ElicitURL, URL: "https://e.example/"})
	require.NoError(t, err)
	assert.Equal(t, ports.ElicitDecline, res.Action)
	boom := errors.New("boom")
	e.FailOnce("Elicit", boom)
	_, err = e.Elicit(context.Background(), form)
	assert.ErrorIs(t, err, boom)
	assert.Len(t, e.Requests(), 3)
	assert.Equal(t, 3, e.Calls("Elicit"))
}

func TestRoots(t *testing.T) {
	var _ ports.Roots = (*Roots)(nil)
	r := NewRoots(ports.Root{URI: "file:///a"})
	l, err := r.List(context.Background())
	require.NoError(t, err)
	assert.Equal(t, []ports.Root{{URI: "file:///a"}}, l)
	r.Fail("List", ErrRefused)
	_, err = r.List(context.Background())
	assert.ErrorIs(t, err, ErrRefused)
}
