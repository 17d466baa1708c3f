// Package redact removes credentials from text that leaves the process:
// URLs in errors and banners, error bodies a server sent back, a credential
// plugin's stderr.
//
//	msg = redact.Secrets(msg, []string{token})
package redact

import (
	"encoding/base64"
	"net/url"
	"regexp"
	"strings"
)

// Mark replaces what was cut. It holds no quote or backslash, so JSON stays
// JSON.
const Mark = "<redacted>"

// BodyLimit bounds how much of an error response is read, and so how much
// of it needs redacting.
const BodyLimit = 1 << 20

// URL hides a password in a URL's user info.
func URL(s string) string {
	if !strings.Contains(s, "@") {
		return s
	}
	u, err := url.Parse(s)
	if err != nil {
		return "<unparsable URL>"
	}
	return u.Redacted()
}

// Text from elsewhere (an error body, a plugin's stderr) may repeat a
// credential. Secrets cuts out the secrets known to have been used,
// then anything shaped like a credential: an Authorization value, a JWT, a
// private key, a token or key field of JSON. The replacements hold no
// quote or backslash, so JSON stays JSON.

// minSecretLen is the shortest known secret searched for: shorter ones
// (an environment value of "1") cannot be told from ordinary text.
const minSecretLen = 4

var credentialShapes = []struct {
	re   *regexp.Regexp
	repl string
}{
	// After "Authorization:" any value is a credential; elsewhere "Bearer x"
	// is one only when x is long enough to be a token, so that "Basic
	// authentication failed" stays readable.
	{regexp.MustCompile(`(?i)(authorization"?\s*[:=]\s*"?(?:bearer|basic)\s+)[^\s"]+`), "${1}" + Mark},
	{regexp.MustCompile(`(?i)\b(bearer|basic)(\s+)[A-Za-z0-9\-._~+/]{16,}=*`), "${1}${2}" + Mark},
	{regexp.MustCompile(`eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*`), Mark},
	{regexp.MustCompile(`(?s)-----BEGIN [A-Z ]*PRIVATE KEY-----.*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)`), Mark},
	{regexp.MustCompile(`(?i)("(?:token|password|clientKeyData|client-key-data)"\s*:\s*)"(?:[^"\\]|\\.)*"`), `${1}"` + Mark + `"`},
}

func Secrets(s string, known []string) string {
	for _, k := range known {
		if len(k) >= minSecretLen {
			s = strings.ReplaceAll(s, k, Mark)
		}
	}
	for _, c := range credentialShapes {
		s = c.re.ReplaceAllString(s, c.repl)
	}
	return s
}

// AuthorizationSecrets is what an Authorization header value gives away:
// the token, or for basic authentication the encoded pair and the password.
func AuthorizationSecrets(authorization string) []string {
	scheme, value, _ := strings.Cut(authorization, " ")
	secrets := []string{value}
	if strings.EqualFold(scheme, "Basic") {
		if pair, err := base64.StdEncoding.DecodeString(value); err == nil {
			if _, password, ok := strings.Cut(string(pair), ":"); ok {
				secrets = append(secrets, password)
			}
		}
	}
	return secrets
}

// opaqueRun is a candidate for Opaque: a long run of the characters of
// hex and base64 (either alphabet), with its padding.
var opaqueRun = regexp.MustCompile(`[A-Za-z0-9+/_-]{32,}={0,2}`)

// Opaque cuts out, besides what Secrets cuts, long runs that look like an
// opaque token: 32 or more hex digits, or 32 or more base64 characters
// mixing upper case, lower case and digits. It is for text where such a
// run is far more likely a credential than anything a reader needs (a
// credential plugin's stderr); an error body from a server keeps its UIDs
// and hashes.
func Opaque(s string, known []string) string {
	return opaqueRun.ReplaceAllStringFunc(Secrets(s, known), func(run string) string {
		if looksOpaque(strings.TrimRight(run, "=")) {
			return Mark
		}
		return run
	})
}

func looksOpaque(run string) bool {
	var upper, lower, digit, other bool
	for _, c := range run {
		switch {
		case c >= 'A' && c <= 'Z':
			upper = true
		case c >= 'a' && c <= 'z':
			lower = true
		case c >= '0' && c <= '9':
			digit = true
		default:
			other = true
		}
	}
	hex := !other && !upper && strings.Trim(run, "0123456789abcdef") == ""
	hex = hex || (!other && !lower && strings.Trim(run, "0123456789ABCDEF") == "")
	return hex || (upper && lower && digit)
}
