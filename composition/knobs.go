package composition

import (
	"github.com/mcpward/mcpward/core/catalog"
	"github.com/mcpward/mcpward/core/supervisor"
)

// applyKnobs sets in s (a copy the caller owns) the knobs of o that are
// not zero: the timeouts, the result, binary and read caps and the discovery
// bounds. The
// Catalog and Discover options are copied before they are changed, so
// ConnectOptions.Supervisor is never modified.
func (o *ConnectOptions) applyKnobs(s *supervisor.Options) {
	if o.ConnectTimeout != 0 {
		s.ConnectTimeout = o.ConnectTimeout
	}
	if o.CallTimeout != 0 {
		s.CallTimeout = o.CallTimeout
	}
	if o.CallTimeoutMax != 0 {
		s.CallTimeoutMax = o.CallTimeoutMax
	}
	if o.ResultCap > 0 || o.MaxBinaryBytes > 0 || o.ReadCap > 0 {
		var c catalog.Options
		if s.Catalog != nil {
			c = *s.Catalog
		}
		if o.ResultCap > 0 {
			c.AdmissionCap = o.ResultCap
		}
		if o.MaxBinaryBytes > 0 {
			c.MaxBinaryBytes = o.MaxBinaryBytes
		}
		if o.ReadCap > 0 {
			c.ReadCap = o.ReadCap
		}
		s.Catalog = &c
	}
	if o.MaxItems > 0 || o.MaxBytes > 0 {
		var d catalog.DiscoverOptions
		if s.Discover != nil {
			d = *s.Discover
		}
		if o.MaxItems > 0 {
			d.MaxItems = o.MaxItems
		}
		if o.MaxBytes > 0 {
			d.MaxBytes = o.MaxBytes
		}
		s.Discover = &d
	}
}
