package httptransport

// Challenge is a 401 or 403 answer of a server, as Options.OnChallenge is
// told of it: which connection it came on and what the server asked for.
// WWWAuthenticate is the server's raw header value, for parsing only: like
// ports.AuthRefusal.Challenge it is never logged or put into an error.
type Challenge struct {
	// ServerID is the target's server id.
	ServerID string
	// URL is the target's URL, as the connection was admitted with it.
	URL string
	// Origin is "scheme://host:port" of the admitted server.
	Origin string
	// Status is 401 or 403.
	Status int
	// WWWAuthenticate is the response's WWW-Authenticate value (the first
	// one), never empty.
	WWWAuthenticate string
}

// WithOnChallenge returns a copy of f whose transports also tell fn of
// every challenge (after Options.OnChallenge, when both are set); f itself
// is unchanged. fn nil returns f. fn has the contract of
// Options.OnChallenge.
func (f *Factory) WithOnChallenge(fn func(Challenge)) *Factory {
	if fn == nil {
		return f
	}
	c := *f
	if prev := f.onChallenge; prev != nil {
		c.onChallenge = func(ch Challenge) { prev(ch); fn(ch) }
	} else {
		c.onChallenge = fn
	}
	return &c
}
