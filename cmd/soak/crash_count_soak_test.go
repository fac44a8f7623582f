//go:build soak

package main

// crashKills is how often TestCrashSafety kills the controller.
const crashKills = 10
