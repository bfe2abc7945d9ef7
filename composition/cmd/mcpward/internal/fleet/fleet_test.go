package fleet

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestSupervisorOptions(t *testing.T) {
	o := SupervisorOptions(Timeouts{Connect: 5 * time.Second, Call: time.Minute})
	assert.Equal(t, 5*time.Second, o.ConnectTimeout)
	assert.Equal(t, 3, o.MaxAttempts)
	o = SupervisorOptions(Timeouts{})
	assert.Equal(t, noTimeout, o.ConnectTimeout, "0 on the command line is no limit")
}

func TestCallContext(t *testing.T) {
	ctx, cancel := CallContext(context.Background(), Timeouts{Call: time.Hour})
	defer cancel()
	dl, ok := ctx.Deadline()
	assert.True(t, ok)
	assert.WithinDuration(t, time.Now().Add(time.Hour), dl, time.Minute)
	ctx, cancel = CallContext(context.Background(), Timeouts{})
	defer cancel()
	_, ok = ctx.Deadline()
	assert.False(t, ok, "0: no deadline")
}
