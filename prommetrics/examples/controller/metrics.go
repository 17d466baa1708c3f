//go:build !nometrics

package main

import "github.com/listwatch/listwatch/prommetrics"

var metrics = prommetrics.Handler
