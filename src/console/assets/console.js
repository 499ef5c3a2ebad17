// Timbre console: the few behaviours htmx does not cover. No inline script is allowed (CSP), so they hang off
// data- attributes here.
(function () {
  'use strict'

  // A failed form moves focus to its error summary, so keyboard and screen-reader users land on what went wrong.
  function focusErrors(root) {
    var summary = root.querySelector('.error-summary')
    if (summary) summary.focus()
  }

  // <form data-confirm="¿Eliminar?">: asks before a destructive post.
  document.addEventListener('submit', function (event) {
    var form = event.target
    var question = form && form.getAttribute && form.getAttribute('data-confirm')
    if (question && !window.confirm(question)) event.preventDefault()
  }, true)

  // <select data-fill> whose options carry data-values='{"receptor.rut":"…"}': picking one fills those inputs of the
  // same form (the cliente and producto pickers). With no script the fields are simply typed by hand.
  document.addEventListener('change', function (event) {
    var select = event.target
    if (!select || !select.hasAttribute || !select.hasAttribute('data-fill')) return
    var option = select.options[select.selectedIndex]
    var raw = option && option.getAttribute('data-values')
    if (!raw) return
    var values = JSON.parse(raw)
    var scope = select.getAttribute('data-fill-prefix') || ''
    Object.keys(values).forEach(function (name) {
      var input = select.form && select.form.elements.namedItem(scope + name)
      if (input && 'value' in input) {
        input.value = values[name] === null ? '' : String(values[name])
        input.dispatchEvent(new Event('input', { bubbles: true }))
      }
    })
  })

  document.addEventListener('DOMContentLoaded', function () { focusErrors(document) })
  document.addEventListener('htmx:afterSwap', function (event) { focusErrors(event.target) })
})()
