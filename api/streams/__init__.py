"""Server-Sent Event streams: a game's (`games`) and a player's (`players`), each told by a hub."""
