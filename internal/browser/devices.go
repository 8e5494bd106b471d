package browser

import (
	_ "embed"
	"encoding/json"
	"slices"
)

// devicesJSON is Playwright's own table of device descriptors, as the
// driver and @playwright/test of the pinned version carry it, so a job on
// a device and its spec's devices['…'] emulate the same browser
// (TestTheDevicesAreThoseOfTheRunner compares them).
//
//go:embed devices.json
var devicesJSON []byte

// Device is how a phone's or tablet's browser looks to a page: its
// viewport, user agent, touch and scale.
type Device struct {
	UserAgent         string     `json:"userAgent"`
	Screen            DeviceSize `json:"screen"`
	Viewport          DeviceSize `json:"viewport"`
	DeviceScaleFactor float64    `json:"deviceScaleFactor"`
	IsMobile          bool       `json:"isMobile"`
	HasTouch          bool       `json:"hasTouch"`
}

// DeviceSize is a device's screen or viewport, in CSS pixels.
type DeviceSize struct {
	Width  int `json:"width"`
	Height int `json:"height"`
}

var devices = func() map[string]Device {
	var m map[string]Device
	if err := json.Unmarshal(devicesJSON, &m); err != nil {
		panic("browser: devices.json: " + err.Error())
	}
	return m
}()

// DeviceNamed returns the device Playwright calls name ("Pixel 7",
// "iPhone 13 landscape").
func DeviceNamed(name string) (Device, bool) {
	d, ok := devices[name]
	return d, ok
}

// DeviceNames lists the devices' names, sorted.
func DeviceNames() []string {
	names := make([]string, 0, len(devices))
	for n := range devices {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}
