"""The app's screens: modal and audit screens, and the presenter's slides."""
