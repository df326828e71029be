// GTK 4 for Swift. The headers import as they are; what Swift cannot call (the checked casts, which are macros,
// and g_signal_connect, also a macro) is wrapped here in small inline functions.
#ifndef CGTK4_SHIM_H
#define CGTK4_SHIM_H

#include <gtk/gtk.h>
#include <glib-unix.h>

static inline GtkWindow *cgtk_window(GtkWidget *widget) { return GTK_WINDOW(widget); }
static inline GtkBox *cgtk_box(GtkWidget *widget) { return GTK_BOX(widget); }
static inline GtkLabel *cgtk_label(GtkWidget *widget) { return GTK_LABEL(widget); }
static inline GtkHeaderBar *cgtk_header_bar(GtkWidget *widget) { return GTK_HEADER_BAR(widget); }
static inline GtkShortcutController *cgtk_shortcut_controller(GtkEventController *controller) {
    return GTK_SHORTCUT_CONTROLLER(controller);
}

#endif
