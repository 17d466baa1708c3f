package httpwatch

import (
	"errors"
	"fmt"
	"time"
)

// StatusError is a failure the API server reported as a Status object (or an
// HTTP status without one).
type StatusError struct {
	Code       int
	Reason     string
	Message    string
	RetryAfter time.Duration
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("%s (%d %s)", e.Message, e.Code, e.Reason)
}

func reasonOrCode(err error, reason string, code int) bool {
	var se *StatusError
	if !errors.As(err, &se) {
		return false
	}
	return se.Reason == reason || (se.Reason == "" && se.Code == code)
}

// IsGone reports a 410: reason Gone or Expired.
func IsGone(err error) bool {
	return reasonOrCode(err, "Gone", 410) || reasonOrCode(err, "Expired", 410)
}

// IsTooManyRequests reports a 429.
func IsTooManyRequests(err error) bool { return reasonOrCode(err, "TooManyRequests", 429) }
