"""The app's widgets: attempts table, groups table, summary pane, header, filter, bars."""
