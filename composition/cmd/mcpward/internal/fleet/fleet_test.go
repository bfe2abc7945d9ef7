package fleet

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/mcpward/mcpward/core/supervisor"
)

func TestSupervisorOptions(t *testing.T) {
	o := SupervisorOptions(Timeouts{Connect: 5 * time.Second, Call: time.Minute})
	assert.Equal(t, 5*time.Second, o.ConnectTimeout)
	assert.Equal(t, time.Minute, o.CallTimeout)
	assert.Equal(t, 3, o.MaxAttempts)
	o = SupervisorOptions(Timeouts{})
	assert.Equal(t, supervisor.NoTimeout, o.ConnectTimeout, "0 on the command line is no limit")
	assert.Equal(t, supervisor.NoTimeout, o.CallTimeout, "0 on the command line is no limit")
}
