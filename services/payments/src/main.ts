// The service entry point arrives with the service itself (issue 11).
export {};
