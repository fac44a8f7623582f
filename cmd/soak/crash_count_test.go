//go:build !soak

package main

// crashKills is how often TestCrashSafety kills the controller (10 with -tags soak).
const crashKills = 3
