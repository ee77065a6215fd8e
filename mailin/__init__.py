"""The inbound SMTP server: replies to turn mails, read and handed to the service."""
