/**
 * The workflows the worker bundles. Incident, postmortem and chat workflows are added by their
 * issues; the search attributes they publish are declared in ./search-attributes.
 */
export {};
