package oauth

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// ReasonClientKeyInvalid (Config): a private key given for private_key_jwt
// is not one PEM block of a PKCS #8, SEC 1 (EC) or PKCS #1 (RSA) private
// key, its type does not fit the signing algorithm asked for, or an
// assertion could not be signed with it. Nothing of the key is reported.
const ReasonClientKeyInvalid = "client_key_invalid"

// assertionLifetime is how long a client assertion is valid (RFC 7523 §3:
// exp, kept short since it can be replayed until then).
const assertionLifetime = time.Minute

// signingKey is a client's private key for private_key_jwt (RFC 7523 §2.2)
// with its algorithm and optional key id. Its PEM is kept so the key can be
// stored with the client registration; it is never printed.
type signingKey struct {
	pem []byte
	key crypto.Signer
	alg jose.SignatureAlgorithm
	kid string
}

// parseSigningKey reads one PEM private key (PKCS #8 "PRIVATE KEY", SEC 1
// "EC PRIVATE KEY" or PKCS #1 "RSA PRIVATE KEY") and pairs it with alg, or
// when alg is "" the usual algorithm of its type: ES256, ES384 or ES512 by
// curve, RS256 for RSA, EdDSA for Ed25519. An alg that does not fit the key
// (an ES* of another curve, an RS*/PS* for a non-RSA key, EdDSA for a
// non-Ed25519 key, anything else) is refused. Errors carry nothing of the
// input. It never panics.
func parseSigningKey(pemBytes []byte, alg, kid string) (*signingKey, error) {
	block, rest := pem.Decode(pemBytes)
	if block == nil || len(trimSpace(rest)) != 0 {
		return nil, errors.New("not one PEM block")
	}
	var key any
	var err error
	switch block.Type {
	case "PRIVATE KEY":
		key, err = x509.ParsePKCS8PrivateKey(block.Bytes)
	case "EC PRIVATE KEY":
		key, err = x509.ParseECPrivateKey(block.Bytes)
	case "RSA PRIVATE KEY":
		key, err = x509.ParsePKCS1PrivateKey(block.Bytes)
	default:
		return nil, errors.New("not a private key")
	}
	if err != nil {
		return nil, errors.New("unreadable private key")
	}
	var want []jose.SignatureAlgorithm // the algorithms key fits, usual first
	switch k := key.(type) {
	case *ecdsa.PrivateKey:
		switch k.Curve {
		case elliptic.P256():
			want = []jose.SignatureAlgorithm{jose.ES256}
		case elliptic.P384():
			want = []jose.SignatureAlgorithm{jose.ES384}
		case elliptic.P521():
			want = []jose.SignatureAlgorithm{jose.ES512}
		}
	case *rsa.PrivateKey:
		want = []jose.SignatureAlgorithm{jose.RS256, jose.RS384, jose.RS512, jose.PS256, jose.PS384, jose.PS512}
	case ed25519.PrivateKey:
		want = []jose.SignatureAlgorithm{jose.EdDSA}
	}
	if len(want) == 0 {
		return nil, errors.New("unsupported key type")
	}
	chosen := want[0]
	if alg != "" {
		chosen = ""
		for _, a := range want {
			if string(a) == alg {
				chosen = a
			}
		}
		if chosen == "" {
			return nil, errors.New("algorithm does not fit the key")
		}
	}
	return &signingKey{pem: append([]byte(nil), pemBytes...), key: key.(crypto.Signer), alg: chosen, kid: kid}, nil
}

// trimSpace returns b without leading and trailing ASCII white space.
func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\n' || b[0] == '\r' || b[0] == '\t') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\n' || b[len(b)-1] == '\r' || b[len(b)-1] == '\t') {
		b = b[:len(b)-1]
	}
	return b
}

// assertion returns a client assertion (RFC 7523 §3) for clientID at the
// authorization server whose issuer is aud: a JWT signed with k, typ JWT,
// kid when k has one, with iss and sub clientID, aud the issuer, a random
// jti, iat now and exp now+assertionLifetime. Errors carry nothing of the
// key.
func (k *signingKey) assertion(clientID, aud string, now time.Time) (string, error) {
	if k == nil {
		return "", errors.New("no key")
	}
	opts := (&jose.SignerOptions{}).WithType("JWT")
	if k.kid != "" {
		opts = opts.WithHeader("kid", k.kid)
	}
	sig, err := jose.NewSigner(jose.SigningKey{Algorithm: k.alg, Key: k.key}, opts)
	if err != nil {
		return "", errors.New("cannot sign")
	}
	raw, err := jwt.Signed(sig).Claims(jwt.Claims{
		Issuer:   clientID,
		Subject:  clientID,
		Audience: jwt.Audience{aud},
		ID:       randomString(),
		IssuedAt: jwt.NewNumericDate(now),
		Expiry:   jwt.NewNumericDate(now.Add(assertionLifetime)),
	}).Serialize()
	if err != nil {
		return "", errors.New("cannot sign")
	}
	return raw, nil
}
