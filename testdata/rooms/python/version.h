// Included from below: must not be allowed.
