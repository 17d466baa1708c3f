//go:build nometrics

package main

import (
	"net/http"

	"github.com/listwatch/listwatch/app"
)

// metrics is none: built with -tags nometrics, the program has no /metrics.
var metrics func(*app.App) (http.Handler, error)
