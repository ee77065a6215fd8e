"""The HTTP kit the REST API and the pages share: problem+json errors, headers, bounded
bodies, seat and player authentication, rate limits, and the app's Referee."""
