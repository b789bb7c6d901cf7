"""The served app: the web server, its sessions, the guard and served exports."""
