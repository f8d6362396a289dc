// The wire protocol speaks JSON: its users get the JSON values, parser and writer with it.
@_exported import JSON
